# hostile: read the host's files
# expect: exception: PermissionError
return open("/etc/passwd").read()
