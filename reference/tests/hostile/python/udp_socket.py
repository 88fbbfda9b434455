# hostile: send a UDP datagram
# expect: exception: PermissionError
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"x", ("127.0.0.1", 9))
return "sent"
