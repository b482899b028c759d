//go:build !unix

package main

import "os"

// terminalWidth returns 0 (unknown): progress lines are then not cut.
func terminalWidth(*os.File) int { return 0 }
