"""What every request goes through before and after routing: outermost.py (its id, its
access-log line, its metrics) wraps guard.py (security headers, Host, cross-site writes,
method override, bodies and their deadlines)."""
