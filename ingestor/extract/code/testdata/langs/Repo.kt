package demo

import kotlin.math.max

/** Repository. */
data class Repo(val name: String) {
    init {
        require(name.isNotEmpty())
    }

    fun describe(): String {
        val s = """
fun fake() {}
"""
        return name + s
    }

    companion object {
        fun of(name: String) = Repo(name)
    }
}

@JvmInline
value class Id(val v: Int)

fun main() {
    println(Repo.of("x").describe())
}
