package recorder

// FailFileSyncs makes the next n fsyncs of r's transcript fail with err
// (the lines stay written), for tests outside the package that drive a
// recorder through package lifecycle. Call it before r is shared (from
// lifecycle.RunOptions.Observe).
func FailFileSyncs(r *Recorder, n int, err error) {
	r.fileSyncHook = func() error {
		if n > 0 {
			n--
			return err
		}
		return r.wf.Sync()
	}
}

// CheckFile is checkFile for tests outside the package: it reads a
// transcript and checks the recorder's invariants (LF at the end, every
// line decoded without a problem, seqs 1..N, the run id on every line).
var CheckFile = checkFile
