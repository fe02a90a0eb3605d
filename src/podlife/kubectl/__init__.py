"""What kubectl does on the client side, for actions that are more than one API call (drain)."""
