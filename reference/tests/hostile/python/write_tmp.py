# hostile: write outside the run (a file the host would find)
# expect: exception: PermissionError
# absent: /tmp/dsh-hostile-write-tmp
with open("/tmp/dsh-hostile-write-tmp", "w") as out:
    out.write("was here")
return "wrote"
