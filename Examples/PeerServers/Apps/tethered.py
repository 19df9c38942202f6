"""Runs a module (`python tethered.py -m uvicorn ...`) for as long as the process that started it
lives: that process holds the write end of this one's stdin, and when it goes -- whatever way it
goes, a crash, SIGKILL, a timeout's kill, exit() on a hang -- stdin reaches end of file and this
process kills itself (uvicorn would otherwise wait for its open sockets and outlive it)."""
import os
import runpy
import signal
import sys
import threading


def _watch_parent():
    try:
        while os.read(0, 4096):
            pass
    finally:
        os.kill(os.getpid(), signal.SIGKILL)


if len(sys.argv) < 3 or sys.argv[1] != "-m":
    sys.exit("usage: tethered.py -m MODULE [ARGS...]")
threading.Thread(target=_watch_parent, name="parent-watch", daemon=True).start()
module = sys.argv[2]
sys.argv = [module] + sys.argv[3:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
