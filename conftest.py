"""Test-wide settings: everything offline."""

import os

# Chroma reads this when its first client is created: no telemetry calls during tests.
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
