# hostile: start threads until something gives
# expect: exception: (RuntimeError|MemoryError)
# limits: heap_mb=64
import threading, time
threads = []
while True:
    t = threading.Thread(target=time.sleep, args=(1000,), daemon=True)
    t.start()
    threads.append(t)
