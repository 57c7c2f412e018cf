"""Files in and out: attachments saved and sent, through checks that hold against swaps."""
