#!/usr/bin/python3
"""A FUSE file system for power-cut tests: it passes every call through to LOWER and remembers, for
each file written since the mount, how many of its bytes were made durable by fsync/fdatasync.

    unsynced_fs.py LOWER MOUNT STATE_FILE

Looking up the path /.power-cut in the mount is the power cut: the file system writes STATE_FILE, a
JSON object mapping each such file (its path under LOWER) to its durable length, and from then on
fails every call with EIO, as a disk without power would, so nothing reaches LOWER any more. The test
then cuts every file in LOWER back to its durable length plus, at most, a prefix of what followed
(writeback that happened to reach the disk): the LevelDB FaultInjectionTestEnv model, as LazyFS does
for Jepsen. File creations, renames, links, unlinks and truncations are kept, as a journaling file
system commits them in order (so a missing folder sync cannot show here). Looking up
/.fail-next-sync makes the next fsync fail with EIO; /.dump-durable writes STATE_FILE without a cut.

Uses Debian's python3-fusepy (module `fusepy`) over libfuse2.
"""

import errno
import json
import os
import sys
import threading

from fusepy import FUSE, FuseOSError, Operations

CUT_PATH = "/.power-cut"
# Looking this up makes the next fsync fail with EIO having made nothing durable (a disk error at
# writeback, which Linux reports once: the sync after it succeeds).
FAIL_NEXT_SYNC_PATH = "/.fail-next-sync"
# Looking this up writes STATE_FILE now, without a cut (to see what is not durable yet).
DUMP_PATH = "/.dump-durable"
CHANGES = {"chmod", "chown", "create", "link", "mkdir", "mknod", "open", "rename", "rmdir",
           "symlink", "truncate", "unlink", "utimens", "write"}


class UnsyncedFs(Operations):
    def __init__(self, lower, state_file):
        self.lower = os.path.realpath(lower)
        self.state_file = state_file
        self.mutex = threading.RLock()
        # path (relative to the mount, with a leading "/") -> durable length
        self.durable = {}
        self.powered = True
        self.fail_next_sync = False

    def __call__(self, op, *args):
        if op not in CHANGES:
            if not self.powered:
                raise FuseOSError(errno.EIO)
            return super().__call__(op, *args)
        # Checked under the lock the cut takes: no change reaches LOWER after the cut.
        with self.mutex:
            if not self.powered:
                raise FuseOSError(errno.EIO)
            return super().__call__(op, *args)

    def _full(self, path):
        return os.path.join(self.lower, path.lstrip("/"))

    def _track(self, path, fh):
        """Starts tracking a file that is about to change: what it holds now is durable."""
        if path not in self.durable:
            self.durable[path] = os.fstat(fh).st_size

    # Files and directories

    def access(self, path, mode):
        if not os.access(self._full(path), mode):
            raise FuseOSError(errno.EACCES)

    def chmod(self, path, mode):
        return os.chmod(self._full(path), mode)

    def chown(self, path, uid, gid):
        return os.chown(self._full(path), uid, gid)

    def getattr(self, path, fh=None):
        if path == CUT_PATH:
            with self.mutex:
                self.powered = False
                with open(self.state_file, "w") as out:
                    json.dump(self.durable, out)
            raise FuseOSError(errno.ENOENT)
        if path == DUMP_PATH:
            with self.mutex:
                with open(self.state_file, "w") as out:
                    json.dump(self.durable, out)
            raise FuseOSError(errno.ENOENT)
        if path == FAIL_NEXT_SYNC_PATH:
            with self.mutex:
                self.fail_next_sync = True
            raise FuseOSError(errno.ENOENT)
        st = os.lstat(self._full(path))
        keys = ("st_atime", "st_ctime", "st_gid", "st_mode", "st_mtime", "st_nlink", "st_size", "st_uid")
        return {key: getattr(st, key) for key in keys}

    def readdir(self, path, fh):
        return [".", ".."] + os.listdir(self._full(path))

    def readlink(self, path):
        return os.readlink(self._full(path))

    def mknod(self, path, mode, dev):
        return os.mknod(self._full(path), mode, dev)

    def mkdir(self, path, mode):
        return os.mkdir(self._full(path), mode)

    def rmdir(self, path):
        return os.rmdir(self._full(path))

    def statfs(self, path):
        st = os.statvfs(self._full(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files",
                "f_flag", "f_frsize", "f_namemax")
        return {key: getattr(st, key) for key in keys}

    def unlink(self, path):
        with self.mutex:
            os.unlink(self._full(path))
            self.durable.pop(path, None)

    def symlink(self, target, source):
        return os.symlink(source, self._full(target))

    def rename(self, old, new):
        with self.mutex:
            os.rename(self._full(old), self._full(new))
            moved = {}
            for path in list(self.durable):
                if path == old or path.startswith(old + "/"):
                    moved[new + path[len(old):]] = self.durable.pop(path)
            self.durable.pop(new, None)
            self.durable.update(moved)

    def link(self, target, source):
        os.link(self._full(source), self._full(target))
        # One inode under two names: what was not durable under one is not under the other.
        if source in self.durable:
            self.durable[target] = self.durable[source]

    def utimens(self, path, times=None):
        return os.utime(self._full(path), times)

    # File contents

    def open(self, path, flags):
        fh = os.open(self._full(path), flags)
        if flags & os.O_TRUNC:
            with self.mutex:
                self.durable[path] = 0
        return fh

    def create(self, path, mode, fi=None):
        fh = os.open(self._full(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with self.mutex:
            self.durable[path] = 0
        return fh

    def read(self, path, length, offset, fh):
        return os.pread(fh, length, offset)

    def write(self, path, data, offset, fh):
        with self.mutex:
            self._track(path, fh)
            return os.pwrite(fh, data, offset)

    def truncate(self, path, length, fh=None):
        with self.mutex:
            if fh is None:
                size = os.stat(self._full(path)).st_size
                self.durable[path] = min(self.durable.get(path, size), length)
                os.truncate(self._full(path), length)
            else:
                self._track(path, fh)
                self.durable[path] = min(self.durable[path], length)
                os.ftruncate(fh, length)

    def flush(self, path, fh):
        # close(2) of one descriptor: not a sync.
        return 0

    def release(self, path, fh):
        return os.close(fh)

    def fsync(self, path, datasync, fh):
        # Not under the lock: a sync still running when the power goes makes nothing durable.
        if not self.powered:
            raise FuseOSError(errno.EIO)
        with self.mutex:
            if self.fail_next_sync:
                self.fail_next_sync = False
                raise FuseOSError(errno.EIO)
        size = os.fstat(fh).st_size
        if datasync:
            os.fdatasync(fh)
        else:
            os.fsync(fh)
        with self.mutex:
            if not self.powered:
                raise FuseOSError(errno.EIO)
            self.durable[path] = max(self.durable.get(path, 0), size)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: unsynced_fs.py LOWER MOUNT STATE_FILE")
    lower, mount, state_file = sys.argv[1:]
    FUSE(UnsyncedFs(lower, state_file), mount, foreground=True, nothreads=False)


if __name__ == "__main__":
    main()
