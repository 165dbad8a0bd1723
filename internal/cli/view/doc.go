// Package view implements "twasm view".
package view
