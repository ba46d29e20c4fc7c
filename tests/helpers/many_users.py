"""Users of one folder, each in a namespace: recorded, and checked to recall right."""

from __future__ import annotations

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from tests.unit_tests.factories import make_episode

NOW = 2_000_000.0


def fill(store: ChromaEpisodeStore, user: int) -> None:
    memory = EpisodicMemory(store=store, namespace=f"user-{user}", clock=lambda: NOW)
    memory.record_many(
        [
            make_episode(
                episode_id=f"u{user}-{j}",
                description=f"Parse config {j} of user {user}",
                timestamp=float(j),
            )
            for j in range(4)
        ]
    )
    # one more write, below Chroma's save threshold: lost if its index were evicted
    memory.record(
        make_episode(
            episode_id=f"u{user}-late",
            description=f"Export the invoices of user {user} to csv",
            timestamp=10.0,
        )
    )


def recalls_right(store: ChromaEpisodeStore, user: int) -> bool:
    memory = EpisodicMemory(store=store, namespace=f"user-{user}", clock=lambda: NOW)
    hits = memory.recall(f"Export the invoices of user {user} to csv", top_k=1)
    return [hit.episode.episode_id for hit in hits] == [f"u{user}-late"] and len(memory) == 5
