package provider

import (
	"fmt"
	"sync/atomic"
)

// LogLevel orders log messages.
type LogLevel int

// Log levels.
const (
	LogError LogLevel = iota
	LogWarning
	LogInfo
	LogDebug
)

// String returns the level's name.
func (l LogLevel) String() string {
	switch l {
	case LogError:
		return "ERROR"
	case LogWarning:
		return "WARNING"
	case LogInfo:
		return "INFO"
	case LogDebug:
		return "DEBUG"
	}
	return fmt.Sprintf("LogLevel(%d)", int(l))
}

// LogFunc receives a provider or SDK log message.
type LogFunc func(level LogLevel, msg string)

type logSink struct {
	fn    LogFunc
	level LogLevel
}

var sink atomic.Pointer[logSink]

// SetLog installs fn for messages at level or more severe; nil fn disables
// logging, which is the default.
func SetLog(fn LogFunc, level LogLevel) {
	if fn == nil {
		sink.Store(nil)
		return
	}
	sink.Store(&logSink{fn: fn, level: level})
}

// Logf logs a message if a log function is installed for its level.
func Logf(level LogLevel, format string, args ...any) {
	s := sink.Load()
	if s == nil || level > s.level {
		return
	}
	s.fn(level, fmt.Sprintf(format, args...))
}
