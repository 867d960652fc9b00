//! spur-guards: the guard kinds of a pipeline, the embedded jq (jaq), and the process
//! execution that shell guards and shell actions share.
