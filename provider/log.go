package provider

import (
	"fmt"
	"sync/atomic"
)

// LogLevel is a log message's severity, with the syslog values of
// urma_vlog_level_t: a smaller value is more severe.
type LogLevel int

// Log levels.
const (
	LogEmerg   LogLevel = 0
	LogAlert   LogLevel = 1
	LogCrit    LogLevel = 2
	LogError   LogLevel = 3
	LogWarning LogLevel = 4
	LogNotice  LogLevel = 5
	LogInfo    LogLevel = 6
	LogDebug   LogLevel = 7
)

var logLevelNames = [...]string{"EMERG", "ALERT", "CRIT", "ERR", "WARNING", "NOTICE", "INFO", "DEBUG"}

// String returns the level's name, as URMA_VLOG_LEVEL_ spells it.
func (l LogLevel) String() string {
	if l >= 0 && int(l) < len(logLevelNames) {
		return logLevelNames[l]
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
