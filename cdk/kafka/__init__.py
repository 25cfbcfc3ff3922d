"""Thin factories over confluent-kafka: producers, consumers and admin clients, and broker providers."""
