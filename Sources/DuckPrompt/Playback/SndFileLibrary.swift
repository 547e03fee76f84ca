import CSndFile

/// libsndfile's calls: `libsndfile.sf_open_fd(…)` is `sf_open_fd` of `<sndfile.h>` (each field
/// is the function of the same name, typed by the header; the list is `DP_SNDFILE_CALLS` in
/// Sources/CSndFile/include/shim.h). libsndfile.so.1 is opened with `dlopen` on the first
/// call (a lazily initialised global: thread-safe), not linked, so a process that reads no
/// audio itself does not load it and its codec libraries at exec. When it cannot be opened the
/// process ends with status 69 (`SystemLibrary.require`).
let libsndfile: dp_sndfile = SystemLibrary.require(dp_sndfile_load(), error: dp_sndfile_error,
                                                   debianPackage: "libsndfile1")
