Feature: verdicts from answers

  Scenario: Quiet mode
    Given a clean answer
    When I derive its verdict quietly
    Then nothing is printed
