"""Protocol 1 and nothing else: exits at a hello of another version; doubts
whenever it may, else makes the smallest legal bid."""

import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        if msg.get("protocol") != 1:
            sys.stderr.write(f"v1_strict: protocol {msg.get('protocol')} is not mine\n")
            sys.exit(3)
        print(json.dumps({"type": "ready", "name": "v1_strict", "version": "1"}), flush=True)
    elif msg["type"] == "turn":
        legal = msg["legal"]
        if legal["dudo"]:
            reply = {"action": "dudo"}
        else:
            face, q = min(((int(f), q) for f, q in legal["min_quantity"].items()), key=lambda fq: (fq[1], fq[0]))
            reply = {"action": "bid", "quantity": q, "face": face}
        print(json.dumps(reply), flush=True)
