"""The interactive API documentation (`/docs`, `/redoc`), served without any network."""
