"""Data-subject erasure (GDPR Art. 17): requests, the cascade over provenance, receipts."""
