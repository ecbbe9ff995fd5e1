#include "cmd_dump.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common.h"
#include "regionstore/store.h"

namespace regionstore::regionctl {
namespace {

struct DumpArgs : StoreArgs {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool length_given = false;
  std::string region;
};

constexpr size_t kBytesPerLine = 16;

// One line as xxd prints it: "00000010: 4865 6c6c 6f0a 0000 ...  Hello...."
// `address` is the offset shown (data-area or payload offset).
void PrintLine(uint64_t address, std::span<const std::byte> bytes, std::string& out) {
  char text[32];
  std::snprintf(text, sizeof text, "%08llx:", static_cast<unsigned long long>(address));
  out += text;
  for (size_t i = 0; i < kBytesPerLine; ++i) {
    if (i % 2 == 0) out += ' ';
    if (i < bytes.size()) {
      std::snprintf(text, sizeof text, "%02x", std::to_integer<unsigned>(bytes[i]));
      out += text;
    } else {
      out += "  ";
    }
  }
  out += "  ";
  for (const std::byte b : bytes) {
    const auto c = std::to_integer<unsigned char>(b);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '.';
  }
  out += '\n';
}

// Writes `text` to standard output. A reader that closed the pipe (`dump |
// head`) has seen enough: that ends the dump quietly (*closed = true).
Status WriteText(const std::string& text, bool* closed) {
  std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::cout.flush();
  if (std::cout) return Status::Ok();
  const int error = errno != 0 ? errno : EIO;
  if (error == EPIPE) {
    *closed = true;
    SetStdoutClosedByReader();
    return Status::Ok();
  }
  return Status::FromErrno(error, "write output", std::string(kStdoutName));
}

// Prints `bytes` in lines of 16, the first one labelled `first_address`.
Status PrintDump(uint64_t first_address, std::span<const std::byte> bytes) {
  std::string out;
  bool closed = false;
  for (size_t at = 0; at < bytes.size() && !closed; at += kBytesPerLine) {
    PrintLine(first_address + at, bytes.subspan(at, std::min(kBytesPerLine, bytes.size() - at)),
              out);
    if (out.size() >= (64 << 10)) {
      errno = 0;
      if (Status s = WriteText(out, &closed); !s.ok()) return s;
      out.clear();
    }
  }
  if (closed) return Status::Ok();
  errno = 0;
  return WriteText(out, &closed);
}

Status RunDump(const DumpArgs& args) {
  // The dump is the point of the command: with nowhere to print it, refuse.
  if (StandardOutputWasClosed()) {
    return Status::Error(StatusCode::kInvalidArgument, "dump", std::string(kStdoutName),
                         "standard output is closed: redirect it (> FILE)");
  }
  Result<Store> store = Store::Open(args.path, OpenMode::kReadOnly, {.symlinks = args.symlinks});
  if (!store.ok()) return store.status();
  if (!args.region.empty()) {
    Result<RegionEntry> region = FindRegionEntry(store->info(), args.region, args.path, "dump");
    if (!region.ok()) return region.status();
    std::vector<std::byte> payload;
    Result<CheckpointMeta> loaded = LoadRegionWarningIfTorn(*store, args.region, payload);
    if (!loaded.ok()) return loaded.status();
    return PrintDump(0, payload);
  }
  // The data area; without --length, from --offset to its end.
  const uint64_t length = args.length_given
                              ? args.length
                              : store->data_size() - std::min(args.offset, store->data_size());
  Result<std::span<const std::byte>> bytes = store->View(args.offset, length);
  if (!bytes.ok()) return bytes.status().WithOperation("dump", args.path);
  return PrintDump(args.offset, *bytes);
}

}  // namespace

void SetupDump(CLI::App& app, Status& outcome) {
  auto args = std::make_shared<DumpArgs>();
  CLI::App* command = AddCommand(
      app, "dump", "Show bytes of the data area, or a checkpoint's newest commit, as hex and ASCII",
      "Example:\n"
      "  regionctl dump state.rs --offset 2MiB --length 64\n"
      "  regionctl dump state.rs --region state | less\n"
      "Lines as xxd prints them: offset (in the data area, or in the payload), 16 bytes\n"
      "in hex, then as ASCII ('.' for anything else). Without --length, to the end of\n"
      "the data area. Takes no lock. A range outside the data area is a usage error (2).\n"
      "--region shows what load returns: exit 1, 3 or 6 as load, and a warning on stderr\n"
      "when it passed over a torn newest commit.\n"
      "A reader that closes the pipe early (| head) ends the dump quietly, exit 0.");
  AddStoreArguments(command, *args);
  CLI::Option* offset = AddSizeOption(command, "--offset", args->offset,
                                      "Start at this data-area offset (default 0)");
  CLI::Option* length = AddSizeOption(command, "--length", args->length, "Show this many bytes");
  CLI::Option* region =
      command->add_option("--region", args->region, "The newest commit of this checkpoint region")
          ->type_name("NAME");
  region->excludes(offset)->excludes(length);
  command->callback([args, length, &outcome] {
    args->length_given = length->count() > 0;
    outcome = RunDump(*args);
  });
}

}  // namespace regionstore::regionctl
