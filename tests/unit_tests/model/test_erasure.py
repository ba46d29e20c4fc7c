"""An erasure's receipt: it round-trips through the journal and never holds the ids."""

from __future__ import annotations

from langchain_episodic.model.erasure import ForgetReceipt, decode_receipt, encode_receipt


def test_the_receipt_round_trips_and_never_holds_the_ids() -> None:
    receipt = ForgetReceipt(
        "abc", "alice", "user asked", 5.0, "ops", episodes=2, episode_ids=("private-id",)
    )
    entry_id, _, payload = encode_receipt(receipt)
    assert "private-id" not in payload
    again = decode_receipt(entry_id, payload)
    assert again is not None
    assert again.to_dict() == receipt.to_dict()
