"""What authors are told beside the build: the item-writing report, one card's accepted answers."""
