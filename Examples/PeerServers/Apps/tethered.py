"""Runs a module (`python tethered.py -m uvicorn ...`) or a program (`python tethered.py --exec
/usr/sbin/mosquitto ...`) for as long as the process that started it lives: that process holds
the write end of this one's stdin, and when it goes -- whatever way it goes, a crash, SIGKILL, a
timeout's kill, exit() on a hang -- stdin reaches end of file and the server is killed (uvicorn
would otherwise wait for its open sockets and outlive it; mosquitto never reads stdin).

With --exec the program replaces this process (same pid, so a signal sent to it reaches the
server itself), and a forked watcher reads the tether: it SIGKILLs the server at end of file, and
dies with the server otherwise (PR_SET_PDEATHSIG)."""
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


def _exec_tethered(program, arguments):
    server = os.getpid()
    if os.fork() == 0:
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: die with the server
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        if os.getppid() != server:
            os._exit(0)
        try:
            while os.read(0, 4096):
                pass
        finally:
            os.kill(server, signal.SIGKILL)
            os._exit(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.execv(program, [program] + arguments)


if len(sys.argv) >= 3 and sys.argv[1] == "--exec":
    _exec_tethered(sys.argv[2], sys.argv[3:])
if len(sys.argv) < 3 or sys.argv[1] != "-m":
    sys.exit("usage: tethered.py -m MODULE [ARGS...] | --exec PROGRAM [ARGS...]")
threading.Thread(target=_watch_parent, name="parent-watch", daemon=True).start()
module = sys.argv[2]
sys.argv = [module] + sys.argv[3:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
