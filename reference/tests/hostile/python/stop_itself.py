# hostile: stop itself, so nothing answers and nothing reads (the wall ceiling must still end it)
# expect: timeout: wall-clock ceiling reached
# limits: wall_ms=1500
import os, signal
os.kill(os.getpid(), signal.SIGSTOP)
