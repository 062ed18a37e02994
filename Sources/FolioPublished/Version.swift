package let folioVersion = "0.1.0"
