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
