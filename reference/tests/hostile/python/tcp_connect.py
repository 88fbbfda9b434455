# hostile: open a TCP connection
# expect: exception: PermissionError
import socket
socket.create_connection(("127.0.0.1", 9), timeout=1)
return "connected"
