"""strip-natives.py JAR KEEP...: rewrite JAR without the native libraries (.so/.jnilib/.dll at its
root) not named in KEEP, entries in their original order with their original timestamps."""
import os
import sys
import zipfile

jar, keep = sys.argv[1], set(sys.argv[2:])
native = (".so", ".jnilib", ".dll")
tmp = jar + ".tmp"
with zipfile.ZipFile(jar) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
    names = [i.filename for i in src.infolist()]
    missing = keep - set(names)
    if missing:
        sys.exit(f"{jar}: {sorted(missing)} not found")
    for info in src.infolist():
        if info.filename.endswith(native) and "/" not in info.filename and info.filename not in keep:
            continue
        dst.writestr(info, src.read(info.filename))
os.replace(tmp, jar)
