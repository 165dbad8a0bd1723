// Package ls implements `twasm ls`: the runs in storage, newest first,
// with their status, start, duration, providers, steps, tools and cost,
// filtered by provider, status, time and name.
package ls
