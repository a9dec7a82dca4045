"""An honest bot that leans on the standard library the way real bots do:
threads, a subprocess, a multiprocessing pool (process-shared semaphores in
/dev/shm), SQLite in its working folder (file locks), a socketpair, temporary
files. Each must work under the sandbox; it answers with what did."""

import multiprocessing
import os
import socket
import sqlite3
import subprocess
import tempfile
import threading


def square(x):
    return x * x


def act(turn):
    ok = {}
    box = []
    t = threading.Thread(target=lambda: box.append(1))
    t.start()
    t.join()
    ok["thread"] = box == [1]
    ok["subprocess"] = subprocess.run(["/bin/sh", "-c", "echo hi"], capture_output=True).stdout == b"hi\n"
    with multiprocessing.get_context("fork").Pool(2) as pool:
        ok["pool"] = pool.map(square, range(5)) == [0, 1, 4, 9, 16]
    lock = multiprocessing.get_context("fork").Lock()
    with lock:
        ok["mp_lock"] = True
    db = sqlite3.connect(os.path.join(tempfile.gettempdir(), "book.db"))
    db.execute("create table if not exists t(x)")
    db.execute("insert into t values (42)")
    db.commit()
    ok["sqlite"] = db.execute("select x from t").fetchone() == (42,)
    db.close()
    a, b = socket.socketpair()
    a.sendall(b"ping")
    ok["socketpair"] = b.recv(4) == b"ping"
    with tempfile.NamedTemporaryFile() as f:
        f.write(b"x")
        f.flush()
        ok["tempfile"] = os.path.getsize(f.name) == 1
    ok["cpu_count"] = (os.cpu_count() or 0) >= 1
    return {"action": "dudo", "ok": ok}
