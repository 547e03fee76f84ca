#ifndef DUCKPROMPT_CSNDFILE_SHIM_H
#define DUCKPROMPT_CSNDFILE_SHIM_H
/* libsndfile for Swift: its types and constants from <sndfile.h>, and its calls through a table
 * filled when a file is first opened (sndfile_library.c): nothing links libsndfile, so a process
 * that reads no audio itself does not load it and the 7 codec libraries it pulls in at exec.
 * Sources/DuckPrompt/Playback/SndFileLibrary.swift is the table's one reader. No logic here. */
#include <sndfile.h>

#include <dynamic_library.h>

/* Every libsndfile call the library makes: one list, from which the table is made. */
#define DP_SNDFILE_CALLS(X) \
    X(sf_close) \
    X(sf_command) \
    X(sf_error) \
    X(sf_open_fd) \
    X(sf_open_virtual) \
    X(sf_readf_float) \
    X(sf_seek) \
    X(sf_strerror) \
    X(sf_version_string)

/* The table: a field for each call, of the same name and its header's type; dp_sndfile_load()
 * opens libsndfile.so.1 and fills it, once per process (thread-safe), or returns NULL when the
 * library cannot be opened or lacks a call, and dp_sndfile_error() then says why
 * (Sources/CDynamicLibrary). */
DP_LIBRARY_DECLARE(dp_sndfile, DP_SNDFILE_CALLS, dp_sndfile_load, dp_sndfile_error)
#endif
