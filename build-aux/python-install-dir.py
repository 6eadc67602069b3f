#!/usr/bin/env python3
"""python-install-dir.py PREFIX MESON_DIR: where `meson install` should put the
Python module so that this Python imports it from PREFIX, for python/meson.build.

Meson installs modules to PREFIX/lib/python3/dist-packages with Debian's Python (its
deb_system scheme), a folder that Python searches for PREFIX=/usr only: after a
`meson install` with meson's default prefix /usr/local, or with ~/.local,
`import lumahist` failed.  Prints one line, FOLDER TAB STATE:

- MESON_DIR keep: MESON_DIR is searched, or PREFIX is Python's own (where meson's
  folder is the distribution's, and which meson-python builds wheels with: an
  absolute folder would lose the {py_platlib} that it maps into the wheel);
- DIR site: the site folder of this Python under PREFIX instead
  (/usr/local/lib/python3.X/dist-packages, ~/.local/lib/python3.X/site-packages),
  which Python searches once it exists;
- MESON_DIR unsearched: no folder that Python searches lies under PREFIX.
"""
import os
import site
import sys


def main():
    prefix, meson_dir = (os.path.normpath(a) for a in sys.argv[1:3])
    searched = {os.path.normpath(p) for p in sys.path if p}
    if meson_dir in searched or prefix == os.path.normpath(sys.base_prefix):
        print(f"{meson_dir}\tkeep")
        return
    site_dirs = site.getsitepackages()
    if site.ENABLE_USER_SITE:
        site_dirs.append(site.getusersitepackages())
    under = prefix.rstrip("/") + "/"
    for folder in map(os.path.normpath, site_dirs):
        if folder.startswith(under):
            print(f"{folder}\tsite")
            return
    print(f"{meson_dir}\tunsearched")


if __name__ == "__main__":
    main()
