from app.embeddings.factory import get_embedder, model_ready
from app.embeddings.provider import Embedder, EmbeddingError

__all__ = ["Embedder", "EmbeddingError", "get_embedder", "model_ready"]
