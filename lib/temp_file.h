// Temp files beside their destination, for publish-by-rename: Store::Create
// and ReplaceFileAtomically build the new file in the destination's
// directory (so the final link or rename stays on one filesystem), then
// publish it onto the destination; on any failure the temp goes.
//
// Where the Io can (Io::CreateAnonymous: O_TMPFILE, and a way to link it),
// the temp has no name while it is built, so no kill of the process can
// leave it behind. Otherwise it is a hidden named file, recorded in the
// signal-safe registry (temp_registry.h) until it is published or removed.
#ifndef REGIONSTORE_LIB_TEMP_FILE_H_
#define REGIONSTORE_LIB_TEMP_FILE_H_

#include <memory>
#include <string>

#include "regionstore/io.h"
#include "regionstore/status.h"
#include "regionstore/temp_files.h"

namespace regionstore::internal {

// The directory holding `path` ("." for a bare file name).
std::string DirectoryOf(const std::string& path);

struct TempFile {
  // The temp's name, while it has one: always for a named temp; for an
  // anonymous one only between its link onto a hidden name and the rename
  // of a replace. Empty: nothing to remove.
  std::string path;
  std::unique_ptr<File> file;
  bool anonymous = false;
  // Its slot in the signal-safe registry while `path` names it (-1: none).
  int registry_slot = -1;
};

// Creates the temp for `path` in path's directory: anonymous if the Io can
// make one there, else ".<name of path>.tmp-<owner>" (temp_files.h),
// exclusively (O_EXCL, mode 0600): an unpredictable name that never opens
// something planted there. `operation` prefixes the errors, which name
// `path`: those of FillRandom and CreateExclusive (kNotFound when the
// directory is missing, kPermissionDenied). Any failure of CreateAnonymous
// means "use a named temp": if the directory itself is the problem, the
// named attempt reports it.
// (First removes what RemoveAbandonedTemps finds beside `path`.)
Result<TempFile> CreateTempBeside(Io& io, const std::string& path, const std::string& operation);

// Removes the temps FindStrayTemps (regionstore/temp_files.h) finds beside
// `path` whose owner is gone; never one named before 0.11. Returns how many
// it removed; a directory it cannot list removes nothing (the create or
// export that calls this goes on, and reports what is wrong with the
// directory itself if anything is).
int RemoveAbandonedTemps(Io& io, const std::string& path);

// Puts the complete, synced temp at `path` and closes it. Without `replace`
// it never replaces an existing file (kAlreadyExists): an anonymous temp is
// linked onto `path`, a named one renamed with Io::Rename(replace=false).
// With `replace`, a named temp is renamed over `path`; an anonymous one is
// first linked onto a new hidden name beside it, then renamed over `path`
// (a SIGKILL between the two leaves that name, the only window where one
// can be left). With `durable`, an anonymous temp is fsynced again once it
// has its name: it was synced with a link count of 0, and only an fsync of
// the file itself promises that the link (the inode's new count) is on disk
// (btrfs logs a tmpfile's link through the inode, not the directory).
// Errors have the operation "<operation>: link", "<operation>: fsync after
// link" or "<operation>: rename" and name `path`; the temp is then still the
// caller's to DiscardTemp (a no-clobber publish whose fsync after link fails
// has left the file at `path`: the message says so).
Status PublishTemp(Io& io, TempFile& temp, const std::string& path, bool replace, bool durable,
                   const std::string& operation);

// Closes and removes the temp after `failure`, and returns `failure`; if the
// temp cannot be removed, the message also says so and names it.
Status DiscardTemp(Io& io, TempFile& temp, const Status& failure);

}  // namespace regionstore::internal

#endif  // REGIONSTORE_LIB_TEMP_FILE_H_
