# hostile: lift its own address-space cap (the host may run as root)
# expect: exception: (ValueError|PermissionError)
import resource
resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
return "lifted"
