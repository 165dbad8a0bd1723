// Package renormalize implements `twasm renormalize RUN`: rebuild a
// transcript from its raw captures with the plugins twasm has now, into a
// new run, leaving the original untouched.
package renormalize
