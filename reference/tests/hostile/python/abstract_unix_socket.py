# hostile: reach a host service on an abstract UNIX socket
# expect: exception: PermissionError
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("\0dsh-hostile")
return "connected"
