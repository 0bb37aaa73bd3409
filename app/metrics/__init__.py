"""`/metrics` for Prometheus: request latency, operation outcomes, forgotten memories."""
