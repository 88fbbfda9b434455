# hostile: replace the protocol channel (fd 3) with /dev/null and go on
# expect: any-failure
import os
os.dup2(os.open("/dev/null", os.O_RDWR), 3)
return "tampered"
