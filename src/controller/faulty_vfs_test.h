// FaultyVfs: SQLite's default VFS wrapped so that a test can make a state
// file stop taking writes as a full disk (SQLITE_FULL, what ENOSPC becomes)
// or a file system turned read-only (SQLITE_IOERR_WRITE, what EROFS on an
// open file becomes) would, and heal it again: the fault injection wraps the
// real implementation (LevelDB's EnvWrapper pattern), so the store's own
// error paths run. chmod cannot do it here: tests run as root, and an open
// descriptor keeps its write access anyway.
//
// While a FaultyVfs lives it is SQLite's default VFS, so a Store opened on a
// file meanwhile writes through it (":memory:" has no file and never does).
// It must outlive every connection opened through it. Reads are never
// touched. One at a time; not thread-safe.
#ifndef TIDE_CONTROLLER_FAULTY_VFS_TEST_H_
#define TIDE_CONTROLLER_FAULTY_VFS_TEST_H_

#include <sqlite3.h>

#include <new>

namespace tide::controller::testing {

class FaultyVfs {
 public:
  enum class Fault { kNone, kFull, kReadOnly };

  FaultyVfs() : real_(sqlite3_vfs_find(nullptr)) {
    vfs_.iVersion = 2;
    vfs_.szOsFile = static_cast<int>(sizeof(File)) + real_->szOsFile;
    vfs_.mxPathname = real_->mxPathname;
    vfs_.zName = "tide-faulty";
    vfs_.pAppData = this;
    vfs_.xOpen = &Open;
    vfs_.xDelete = [](sqlite3_vfs* v, const char* name, int sync) { return Real(v)->xDelete(Real(v), name, sync); };
    vfs_.xAccess = [](sqlite3_vfs* v, const char* name, int flags, int* out) {
      return Real(v)->xAccess(Real(v), name, flags, out);
    };
    vfs_.xFullPathname = [](sqlite3_vfs* v, const char* name, int n, char* out) {
      return Real(v)->xFullPathname(Real(v), name, n, out);
    };
    vfs_.xDlOpen = [](sqlite3_vfs* v, const char* name) { return Real(v)->xDlOpen(Real(v), name); };
    vfs_.xDlError = [](sqlite3_vfs* v, int n, char* out) { Real(v)->xDlError(Real(v), n, out); };
    vfs_.xDlSym = [](sqlite3_vfs* v, void* h, const char* sym) { return Real(v)->xDlSym(Real(v), h, sym); };
    vfs_.xDlClose = [](sqlite3_vfs* v, void* h) { Real(v)->xDlClose(Real(v), h); };
    vfs_.xRandomness = [](sqlite3_vfs* v, int n, char* out) { return Real(v)->xRandomness(Real(v), n, out); };
    vfs_.xSleep = [](sqlite3_vfs* v, int us) { return Real(v)->xSleep(Real(v), us); };
    vfs_.xCurrentTime = [](sqlite3_vfs* v, double* t) { return Real(v)->xCurrentTime(Real(v), t); };
    vfs_.xGetLastError = [](sqlite3_vfs* v, int n, char* out) { return Real(v)->xGetLastError(Real(v), n, out); };
    vfs_.xCurrentTimeInt64 = [](sqlite3_vfs* v, sqlite3_int64* t) {
      return Real(v)->xCurrentTimeInt64(Real(v), t);
    };
    sqlite3_vfs_register(&vfs_, /*makeDflt=*/1);
  }
  ~FaultyVfs() {
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(real_, /*makeDflt=*/1);
  }
  FaultyVfs(const FaultyVfs&) = delete;
  FaultyVfs& operator=(const FaultyVfs&) = delete;

  // From now on every write fails (or succeeds again, with kNone).
  void Set(Fault fault) { fault_ = fault; }

 private:
  // A file of the real VFS, right behind the wrapper in the same block.
  struct File {
    sqlite3_file base;
    FaultyVfs* owner;
    sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
  };

  static sqlite3_vfs* Real(sqlite3_vfs* v) { return static_cast<FaultyVfs*>(v->pAppData)->real_; }
  static sqlite3_file* R(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real(); }
  static Fault FaultOf(sqlite3_file* f) { return reinterpret_cast<File*>(f)->owner->fault_; }

  static int Open(sqlite3_vfs* v, const char* name, sqlite3_file* f, int flags, int* out_flags) {
    File* file = reinterpret_cast<File*>(f);
    file->base.pMethods = nullptr;
    file->owner = static_cast<FaultyVfs*>(v->pAppData);
    const int rc = Real(v)->xOpen(Real(v), name, file->real(), flags, out_flags);
    // Closed by SQLite only if pMethods is set: set it only when the real
    // file is open.
    if (file->real()->pMethods != nullptr) file->base.pMethods = &kMethods;
    return rc;
  }

  static int Write(sqlite3_file* f, const void* data, int n, sqlite3_int64 at) {
    switch (FaultOf(f)) {
      case Fault::kFull: return SQLITE_FULL;
      case Fault::kReadOnly: return SQLITE_IOERR_WRITE;
      case Fault::kNone: break;
    }
    return R(f)->pMethods->xWrite(R(f), data, n, at);
  }
  static int Truncate(sqlite3_file* f, sqlite3_int64 size) {
    switch (FaultOf(f)) {
      case Fault::kFull: return SQLITE_FULL;
      case Fault::kReadOnly: return SQLITE_IOERR_TRUNCATE;
      case Fault::kNone: break;
    }
    return R(f)->pMethods->xTruncate(R(f), size);
  }

  static constexpr sqlite3_io_methods kMethods = {
      /*iVersion=*/3,
      /*xClose=*/[](sqlite3_file* f) { return R(f)->pMethods->xClose(R(f)); },
      /*xRead=*/[](sqlite3_file* f, void* d, int n, sqlite3_int64 at) { return R(f)->pMethods->xRead(R(f), d, n, at); },
      &Write,
      &Truncate,
      /*xSync=*/[](sqlite3_file* f, int flags) { return R(f)->pMethods->xSync(R(f), flags); },
      /*xFileSize=*/[](sqlite3_file* f, sqlite3_int64* size) { return R(f)->pMethods->xFileSize(R(f), size); },
      /*xLock=*/[](sqlite3_file* f, int lock) { return R(f)->pMethods->xLock(R(f), lock); },
      /*xUnlock=*/[](sqlite3_file* f, int lock) { return R(f)->pMethods->xUnlock(R(f), lock); },
      /*xCheckReservedLock=*/
      [](sqlite3_file* f, int* out) { return R(f)->pMethods->xCheckReservedLock(R(f), out); },
      /*xFileControl=*/[](sqlite3_file* f, int op, void* arg) { return R(f)->pMethods->xFileControl(R(f), op, arg); },
      /*xSectorSize=*/[](sqlite3_file* f) { return R(f)->pMethods->xSectorSize(R(f)); },
      /*xDeviceCharacteristics=*/[](sqlite3_file* f) { return R(f)->pMethods->xDeviceCharacteristics(R(f)); },
      /*xShmMap=*/
      [](sqlite3_file* f, int page, int size, int extend, void volatile** out) {
        return R(f)->pMethods->xShmMap(R(f), page, size, extend, out);
      },
      /*xShmLock=*/
      [](sqlite3_file* f, int offset, int n, int flags) { return R(f)->pMethods->xShmLock(R(f), offset, n, flags); },
      /*xShmBarrier=*/[](sqlite3_file* f) { R(f)->pMethods->xShmBarrier(R(f)); },
      /*xShmUnmap=*/[](sqlite3_file* f, int del) { return R(f)->pMethods->xShmUnmap(R(f), del); },
      /*xFetch=*/
      [](sqlite3_file* f, sqlite3_int64 at, int n, void** out) {
        // No memory-mapped reads: every page goes through xRead.
        *out = nullptr;
        return SQLITE_OK;
      },
      /*xUnfetch=*/[](sqlite3_file* f, sqlite3_int64 at, void* p) { return SQLITE_OK; },
  };

  sqlite3_vfs* real_;
  sqlite3_vfs vfs_{};
  Fault fault_ = Fault::kNone;
};

}  // namespace tide::controller::testing

#endif  // TIDE_CONTROLLER_FAULTY_VFS_TEST_H_
