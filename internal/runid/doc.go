// Package runid makes and checks run ids: the canonical lower-case
// spelling of a UUID v4, which is what makes an id safe as a file name
// (package recorder's threat model). recorder.ErrInvalidRunID is
// [ErrInvalid], so callers outside the module match rejections with it.
package runid
