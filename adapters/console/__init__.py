"""What every command's terminal side shares: the :class:`.invocation.Invocation` a command works on (and the
wrapper turning its errors into one paragraph and an exit code), free text from the run store shown safely."""
