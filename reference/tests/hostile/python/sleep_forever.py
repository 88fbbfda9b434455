# hostile: never finish
# expect: timeout: wall-clock ceiling reached
# limits: wall_ms=1000
import time
time.sleep(1000)
