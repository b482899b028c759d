//go:build !linux

package query_test

func threadCPUNanos() int64 { return -1 }

func processCPUNanos() int64 { return -1 }
