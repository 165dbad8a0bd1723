// Package servecmd implements "twasm serve": the local web app over the
// storage (package web).
package servecmd
