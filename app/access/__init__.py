"""Access requests (GDPR Art. 15/20): an export of everything Lethe holds about a subject."""
