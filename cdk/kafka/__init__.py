"""Thin factories over confluent-kafka: producers, consumers, admin clients, broker providers."""
