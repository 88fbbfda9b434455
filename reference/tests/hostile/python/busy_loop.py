# hostile: spin on the CPU
# expect: timeout: compute budget exhausted
# limits: compute_ms=500 wall_ms=5000
while True:
    pass
