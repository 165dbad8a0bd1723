// Package rawfile reads and writes raw captures, the provider's bytes kept
// beside a transcript (package capture writes them, renormalize, the
// archive's replay, the web app's raw line and recovery read them). Every
// reader of a raw capture goes through [Open], which reads both kinds a
// storage may hold:
//
//   - plain: the bytes as they came (every capture an older twasm
//     wrote, named "*.raw"; a session that grows keeps extending its
//     plain capture plainly, so the steps that name it stay true);
//   - framed: the bytes compressed in independent zstd frames (named
//     "*.raw.zst", [Framed]), which new captures are.
//
// # Framed format
//
// A framed capture is a valid zstd stream (zstdcat reads it back) made of:
// a file header, a skippable frame (magic 0x184D2A5E) of 8 bytes
// "twraw 1\n"; then frames, each a skippable frame (magic 0x184D2A5F)
// of 8 bytes holding the compressed length C and the uncompressed length
// U of what follows (little-endian uint32), then C bytes: one standard
// zstd frame of U bytes, with its content size and checksum. A frame is
// written by one write(2) when the writer flushes ([Writer.Flush]: before
// the transcript names its bytes, when FrameBytes are pending, at Close),
// so a frame holds at most [FrameBytes] and a frame of a step never holds
// another step's bytes: a session that grows appends frames ([Append]).
// A capture nothing will extend again (its run ended) may be sealed
// ([Seal]): rewritten in frames of FrameBytes, since each part's small
// frame compressed alone (the real captures of the archive's
// BenchmarkStoreSize: 0.17 of their bytes in frames of a MiB, 0.23 in
// frames of 64 KiB, 0.30 of 16 KiB).
//
// # Invariants
//
//   - Nothing durable is lost to a crash: a process killed mid-write
//     leaves at most the last frame cut short; the frames before it are
//     whole. [Open] finds the complete frames from their headers alone
//     (no decompression); a cut or damaged tail is reported
//     ([File.Damage]: [ErrTorn], [ErrCorrupt]), and a reader that reads
//     past the complete frames gets that error, never a silent EOF. A
//     writer refuses to append after a damaged tail ([Append]); the
//     archive cuts a capture back to what its last completed part holds
//     first ([Cut], at a frame boundary, checking the sha256 of the bytes
//     kept).
//   - Sealing changes no raw byte: the copy is written beside the capture
//     (name + [SealExt]), synced, read back and checked against the
//     capture's size and sha256, then renamed over it (the rename
//     synced); a crash leaves the capture whole, sealed or not (and
//     perhaps the copy, which no reader opens and a later Seal of the
//     capture removes first, whatever the capture holds: a copy is never
//     taken, only made again). A sealed
//     capture's frames no longer begin where its steps' bytes do, so
//     only one nothing will extend or [Cut] is sealed.
//   - A reader seeks without decompressing what it skips: the frame
//     headers give each frame's place ([File.Section]).
//   - A frame states its lengths before its bytes: a frame claiming more
//     than [FrameBytes] uncompressed, or whose zstd frame does not
//     decode to exactly its stated length, is [ErrCorrupt]; decoding is
//     bounded by the claim, so a hostile file cannot make a reader
//     allocate more than a frame.
//   - The raw bytes' size and sha256 that a step's result states
//     (transcript.RawRef) are of the uncompressed bytes, whichever kind
//     holds them.
//
// The zstd codec is github.com/klauspost/compress/zstd (pure Go, no cgo),
// at its fastest level with its smaller tables (see encoder for why):
// one encoder and one decoder per process, made on first use and used
// only through EncodeAll and DecodeAll, which are safe for concurrent
// use and keep no state between calls.
package rawfile
