/// Multiplication in GF(2⁸) with the QR reducing polynomial x⁸ + x⁴ + x³ + x² + 1.
enum GF256 {
    // exp is doubled so log[a] + log[b] indexes it without a modulo.
    private static let tables: (exp: [UInt8], log: [Int]) = {
        var exp = [UInt8](repeating: 0, count: 512)
        var log = [Int](repeating: 0, count: 256)
        var value = 1
        for power in 0..<255 {
            exp[power] = UInt8(value)
            log[value] = power
            value <<= 1
            if value & 0x100 != 0 { value ^= 0x11D }
        }
        for power in 255..<512 { exp[power] = exp[power - 255] }
        return (exp, log)
    }()

    /// The field product `a · b`.
    static func multiply(_ a: UInt8, _ b: UInt8) -> UInt8 {
        if a == 0 || b == 0 { return 0 }
        return tables.exp[tables.log[Int(a)] + tables.log[Int(b)]]
    }
}

/// Reed–Solomon error correction codewords as QR Codes use them (generator roots α⁰…αⁿ⁻¹).
enum ReedSolomon {
    /// Coefficients of ∏(x − αⁱ), highest power first, without the leading 1.
    static func generator(degree: Int) -> [UInt8] {
        var coefficients = [UInt8](repeating: 0, count: degree)
        coefficients[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            // Multiply the running product by (x − root); in GF(2⁸) minus is plus.
            for index in 0..<degree {
                coefficients[index] = GF256.multiply(coefficients[index], root)
                if index + 1 < degree { coefficients[index] ^= coefficients[index + 1] }
            }
            root = GF256.multiply(root, 2)
        }
        return coefficients
    }

    /// The remainder of `data · xⁿ` divided by the generator: the n error correction codewords.
    static func remainder(of data: [UInt8], generator: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ result[0]
            result.removeFirst()
            result.append(0)
            for index in result.indices {
                result[index] ^= GF256.multiply(generator[index], factor)
            }
        }
        return result
    }
}
