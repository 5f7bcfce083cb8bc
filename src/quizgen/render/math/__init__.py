"""Math in card text: checked for Anki's MathJax, converted to MathML for the quiz."""
