"""Who may answer a question (client/widget_answers.Addressee), without Home Assistant."""

from custom_components.pacerelle.client.values.widget_answers import Addressee

OWNER, AUNT = "usr_owner", "usr_aunt"


def test_direct_conversation_the_person_asked() -> None:
    asked = Addressee.of("conv_1", OWNER, None, OWNER)
    assert asked.refusal("conv_1", OWNER) is None
    assert asked.refusal("conv_1", AUNT) is not None
    assert asked.refusal("conv_2", OWNER) is not None


def test_group_the_member_whose_message_it_answers() -> None:
    asked = Addressee.of("conv_g", "group:conv_g", AUNT, OWNER)
    assert asked.refusal("conv_g", AUNT) is None
    # The owner does not answer for the aunt, nor the aunt in another conversation.
    assert asked.refusal("conv_g", OWNER) is not None
    assert asked.refusal("conv_1", AUNT) is not None


def test_group_without_a_request_the_owner() -> None:
    asked = Addressee.of("conv_g", "group:conv_g", None, OWNER)
    assert asked.refusal("conv_g", OWNER) is None
    assert asked.refusal("conv_g", AUNT) is not None
